"""dtsim_profile: measure one device's per-layer training costs with PyTorch and write a
dtsim workload trace (format version 3, workloads/FORMAT.md).

Run it as ``python3 -m dtsim_profile --help`` (or the ``profiler/dtsim-profile`` wrapper).
"""

__version__ = "0.1"
TOOL_NAME = f"dtsim_profile {__version__}"
