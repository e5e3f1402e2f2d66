"""The package version: a leaf module, so that whatever records the version (the store, campaign manifests)
imports nothing else of the package (``mechverify/__init__`` reaches the Python API lazily, and the API sits above
the verifier)."""

__version__ = "0.1.0"
