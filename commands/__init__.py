"""The click commands of `provrepair`, one module per group of commands.

The CLI layer: parse options, call the library, print (or `--json`). Only modules in this
package and `cli.py` import click or print; the library reports through return values,
exceptions and the `provenance.progress.Progress` protocol.
"""
