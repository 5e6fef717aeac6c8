"""``sqlml ui``: a local web page of a datasource's runs (their DAG, logs and states), its
models (versions, metrics, plots) and an editor that runs statements against it.

Installed with the ``ui`` extra (Starlette, uvicorn, Jinja2); the page's assets ship in
``static/``, its HTML in ``templates/``.
"""
