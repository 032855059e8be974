"""A reviewer that fails, for the web review's fault tests (imported in the worker)."""


def review(*args, **kwargs):
    raise RuntimeError("this reviewer always fails")
