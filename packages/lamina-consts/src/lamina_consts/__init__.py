"""lamina-consts: the closed-over constants pass (seed 000).

It owns every decision about which constants become const args; core only records literals.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
