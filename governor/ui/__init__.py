"""The read-only web view of a store: ``governor ui`` (the ``ui`` extra).

| module | owns |
| --- | --- |
| ``data.py`` | what the pages show, read from the store (summaries, one goal's events, upstreams) |
| ``timeline.py`` | a goal's runs and notes, in order, from its events (pure) |
| ``markup.py`` | HTML from values: every text escaped, hostile text made visible and inert |
| ``layout.py``, ``list_page.py``, ``goal_page.py`` | the pages (pure: values in, HTML out) |
| ``server.py`` | the Starlette app, its security headers, binding and serving (imports the extra) |
| ``static/`` | the style sheet, the refresh script and the icon, shipped in the wheel |

Only ``server.py`` imports Starlette or uvicorn, so the rest is usable and testable without
the extra.
"""
