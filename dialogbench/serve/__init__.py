"""``dialogbench serve``: the lake's reports over HTTP, read-only. ``files`` decides which file a URL names (nothing
outside ``<lake>/reports``), ``index`` renders the ``/`` page, ``room`` holds each connection until it has asked (no
thread for an idle one), ``hosts`` says which ``Host`` names are answered, ``server`` answers requests and stops on a
signal."""

from dialogbench.serve.server import ServeError, make_server, serve_until_stopped, url

__all__ = ["ServeError", "make_server", "serve_until_stopped", "url"]
