"""`import tiktoken` resolving to tokenizer.compat: how tiktoken's own test suite is run against it
(tests/test_compat_tiktoken_suite.py puts this folder first on PYTHONPATH). The same names as
tiktoken's package __init__."""

from tokenizer.compat import TIKTOKEN_VERSION as __version__
from tokenizer.compat import (
    Encoding,
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)

__all__ = [
    "Encoding",
    "__version__",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]
