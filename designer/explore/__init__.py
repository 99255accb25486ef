"""Deciding between designs (Qt-free): sweeps over a design space evaluated on Dask, the optimizer
that answers "the cheapest design that…", and the figures both read (`designer.engine.figures`)."""
