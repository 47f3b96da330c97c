"""The web view of a store: ``governor ui`` (the ``ui`` extra); read-only unless
``--allow-actions``.

| module | owns |
| --- | --- |
| ``data.py`` | what the pages show, read from the store (summaries by attention, one goal's events, upstreams) |
| ``timeline.py`` | a goal's runs and notes, in order, from its events (pure) |
| ``markup.py`` | HTML from values: every text escaped, hostile text made visible and inert |
| ``layout.py``, ``list_page.py``, ``goal_page.py`` | the pages (pure: values in, HTML out) |
| ``forms.py`` | a goal page's forms when actions are allowed (pure) |
| ``keys.py`` | the access token and the one-time form tokens |
| ``server.py`` | the Starlette app, its security headers, the Host check, the token link |
| ``acts.py`` | the POST route of ``--allow-actions``: its checks, and the CLI's verb it runs |
| ``serving.py`` | binding the address, TLS, uvicorn, stopping on a signal |
| ``static/`` | the style sheet, the refresh script and the icon, shipped in the wheel |

Only ``server.py``, ``acts.py`` and ``serving.py`` import Starlette or uvicorn, so the rest
is usable and testable without the extra.
"""
