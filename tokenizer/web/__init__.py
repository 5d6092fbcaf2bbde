"""The page's Python side: what the playground's Web Worker runs under Pyodide.

- `bridge`: one function per worker message (encode, split, decode, load, merge tree...), called
  by web/worker.js through `pyodide.pyimport("tokenizer.web.bridge")`.
- `learn`: the Learn view's step-through training, one request in, every step out.

Plain Python on top of the library: CPython runs the same functions in the tests, so the page's
answers are checked against `Tokenizer.encode/split/decode` without a browser.
"""
