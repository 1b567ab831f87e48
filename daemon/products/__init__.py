"""One package per Jupiter product a plan kind uses (docs/products.md).

Each product package holds everything of its kind that is not shared:

    model.py   the request body (one model: the plan's ``request`` and the API
               client both check it) and its cross-field rules (`checks`)
    steps.py   the order call, what txguard holds the transaction to
               (`expectation`), and the execute call with its result

A kind is registered twice, by its two halves: `jupcron.products.kinds` (the
request side: plans, pre-flight, price protection) and `jupcron.products.registry`
(the run's steps). Both are looked up once by kind; nothing outside this package
branches on a plan's kind or its request's type (tests/unit/test_products_arch.py).
The emulator's twin of each product is named after it (``daemon/emulator``).
"""
