"""Trusted source files that families hand to the sandbox: preludes run before a program and
modules a program may import (SPADE programs import ``math_verify``). They are read as text with
``importlib.resources``; importing them as modules also works, for tests and tools."""
