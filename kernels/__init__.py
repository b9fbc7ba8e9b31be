"""Pure jnp kernels of jaxtests, installed as ``jaxtests.kernels``.

Kernels import only jax, numpy and each other. They take canonical arrays and
static configuration, do no validation, and are not jitted where defined, so
they compose under ``vmap``/``jit`` in the API layer.
"""
