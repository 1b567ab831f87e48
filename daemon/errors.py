"""The one error tree of jupcron, grouped by what the caller does next.

    JupcronError
    ├── FatalError            needs a human; the CLI exits non-zero with one line,
    │   │                     the daemon stops (exit 1)
    │   ├── ConfigError       the daemon config is missing or wrong
    │   ├── PlanError         a plan file is wrong (carries every problem found)
    │   ├── YamlLoadError     a file cannot be read as YAML (carries one problem)
    │   ├── KeypairError      the keypair file cannot be used
    │   ├── ApiAuthError      401/403 from the API: a wrong key or a key without access
    │   └── StoreError        the database cannot be used (wrong URL, not migrated)
    ├── RetryableError        back off and try again (bounded, recorded)
    │   ├── ApiTransportError timeout, refused or dropped connection
    │   ├── ApiServerError    HTTP 5xx
    │   ├── RateLimitedError  HTTP 429 (``retry_after`` seconds, when known)
    │   ├── ApiGarbageError   a response we cannot parse (retryable only before signing)
    │   ├── ApiRetryLaterError a 4xx the API documents as "retry shortly"
    │   ├── StoreBusyError    the database is locked or unreachable for a moment
    │   ├── NotLeadingError   this daemon does not lead the plan's wallet at its fire time
    │   └── NoSpareCapacityError  background work found no spare request slot (runs first)
    └── RejectedError         record the run as rejected/failed/skipped and move on
        ├── ApiRejectedError  HTTP 4xx with the API's error envelope
        ├── ExecuteFailedError the execute call answered ``Failed``
        ├── GuardRejectedError txguard refused to sign
        └── LimitError        a safety limit (cap, balance, kill switch) stopped the run

`ApiError` is not a branch: it is a mixin that every API error above carries
(``Api*Error``, ``RateLimitedError``, ``ExecuteFailedError``), with what the API
told us: the HTTP status, the API's ``code``, its ``error``/``cause`` text and the
raw body (trimmed), so the run row can record all of it. Catch by branch, read
``info`` with ``isinstance(exc, ApiError)``. Foreign exceptions (httpx, psycopg,
solders) are translated at the adapter with ``raise ... from exc``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class JupcronError(Exception):
    """Something went wrong in jupcron."""

    def __init__(self, message: str | None = None) -> None:
        self.message = message or (self.__class__.__doc__ or self.__class__.__name__).strip()
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class FatalError(JupcronError):
    """jupcron cannot go on without a human."""


class ConfigError(FatalError):
    """The daemon configuration is not valid."""


class KeypairError(FatalError):
    """The keypair file cannot be used."""


class StoreError(FatalError):
    """The database cannot be used."""


@dataclass(frozen=True)
class Problem:
    """One problem found in a YAML file, with its position (1-based; 0 = unknown)."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}: {self.message}"
        return f"{self.file}: {self.message}"


class PlanError(FatalError):
    """The plan files are not valid."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems) or None)


class RetryableError(JupcronError):
    """A passing problem: back off and try again."""


class StoreBusyError(RetryableError):
    """The database is busy or unreachable for a moment."""


class NotLeadingError(RetryableError):
    """This daemon does not lead the plan's wallet now: the slot is not run here (and
    not dropped: it is tried again, and its next leader fires it from the store)."""


class NoSpareCapacityError(RetryableError):
    """No spare API capacity for background work right now: runs come first."""


class RejectedError(JupcronError):
    """The run cannot go on; record why and move on."""


class GuardRejectedError(RejectedError):
    """txguard refused to sign the transaction."""

    def __init__(self, reasons: list[str], evidence: object = None) -> None:
        self.reasons = reasons
        self.evidence = evidence  # what showed it (a simulation's balance diff), if anything
        super().__init__("txguard refused: " + "; ".join(reasons))


class YamlLoadError(FatalError):
    """A file could not be read as YAML; carries one `Problem`."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


class LimitError(RejectedError):
    """A safety limit stopped the run before anything was ordered."""


@dataclass
class ApiErrorInfo:
    """What the API told us, kept on every API error."""

    operation: str = ""
    http_status: int | None = None
    code: int | str | None = None
    error: str | None = None
    cause: str | None = None
    body: str | None = field(default=None, repr=False)


class ApiError:
    """The Jupiter API call did not succeed (a mixin: never raised on its own)."""

    def __init__(self, message: str | None = None, info: ApiErrorInfo | None = None) -> None:
        self.info = info or ApiErrorInfo()
        super().__init__(message)  # type: ignore[call-arg]  # the JupcronError branch's

    @property
    def http_status(self) -> int | None:
        return self.info.http_status

    @property
    def code(self) -> int | str | None:
        return self.info.code


class ApiAuthError(ApiError, FatalError):
    """The API refused our key (401/403): check api.key_file or JUPITER_API_KEY."""


class ApiTransportError(ApiError, RetryableError):
    """The API could not be reached (timeout, refused or dropped connection)."""


class ApiServerError(ApiError, RetryableError):
    """The API answered with a server error (5xx)."""


class RateLimitedError(ApiError, RetryableError):
    """The API rate limit was hit (429)."""

    def __init__(
        self,
        message: str | None = None,
        info: ApiErrorInfo | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, info)


class ApiGarbageError(ApiError, RetryableError):
    """The API answered with a body we cannot understand."""


class ApiRetryLaterError(ApiError, RetryableError):
    """The API asked to retry shortly (a 4xx it documents as temporary)."""


class ApiRejectedError(ApiError, RejectedError):
    """The API rejected the request (4xx)."""


class ExecuteFailedError(ApiError, RejectedError):
    """The execute call reported the transaction as failed."""

    def __init__(
        self,
        message: str | None = None,
        info: ApiErrorInfo | None = None,
        retry_with_fresh_order: bool = False,
    ) -> None:
        self.retry_with_fresh_order = retry_with_fresh_order
        super().__init__(message, info)
