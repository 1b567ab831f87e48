"""Fire times: cron maths, schedules, the scheduler that fires plans, missed slots, runway."""
