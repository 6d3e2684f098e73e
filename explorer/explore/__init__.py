"""The interactive explorer (``kafka-mc explore``): a small HTTP server on 127.0.0.1 and one
page that walk any model's state space, or a saved counterexample, in the browser.

- :mod:`explorer.explore.session`: a system walked by paths of successor indices, and what
  the page shows at each state (the state in the model's words, the enabled actions and what
  each changes, every property's verdict with its explanation, the step table and sequence
  diagram), diffs of steps and of paths, random walks, trace and graph exports;
- :mod:`explorer.explore.find`: "find from here", a bounded search with the project's search
  core to the nearest violation or witness, with progress and cancel;
- :mod:`explorer.explore.server`: the HTTP side (``http.server``) and its guards: loopback,
  the Host header, the token, bounded requests, its own assets only;
- :mod:`explorer.explore.command`: the command line;
- ``static/``: the page (plain HTML, CSS and JavaScript: no build step, no CDN).
"""
