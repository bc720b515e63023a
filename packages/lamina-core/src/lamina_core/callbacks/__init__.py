"""Host callbacks and debugging: `pure_callback` and `io_callback` (`_callbacks`),
`jax.debug`'s `callback` and `print` (`_debugging`), and `breakpoint` (`_debugger`).
Their lowerings are the runtime's (they need the host).
"""
