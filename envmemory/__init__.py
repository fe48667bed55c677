"""The FAISS-backed environment memory: durable records, embedding dedupe, mastery tracking.

Importing this package is light; FAISS, sentence-transformers and NumPy load in the modules that
use them (``envmemory.faiss_memory``, ``envmemory.index``, ``envmemory.embed``).
"""
