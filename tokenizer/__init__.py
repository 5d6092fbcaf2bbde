"""BPE Playground: train byte-level BPE tokenizers and compare them with tiktoken's."""

from .core import Tokenizer
from .encodings import get_encoding, list_encodings
from .extend import extend
from .train import train

__version__ = "0.1.0"
__all__ = ["Tokenizer", "extend", "get_encoding", "list_encodings", "train", "__version__"]
