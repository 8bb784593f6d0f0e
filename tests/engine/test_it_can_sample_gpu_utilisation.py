"""The full-scale bench can read the GPU's utilisation: torch reads it through pynvml (nvidia-ml-py).

Without pynvml `torch.cuda.utilization` raises and the bench reported utilisation as null on every
GPU (issue 17, item 12). On a CPU machine there is no GPU to read, but the library must be there.
"""

import importlib
import inspect

import torch


def test_the_management_library_torch_reads_utilisation_through_is_installed():
    pynvml = importlib.import_module("pynvml")
    assert hasattr(pynvml, "nvmlDeviceGetUtilizationRates")
    # torch's own reader is the one the bench calls, and it goes through pynvml.
    assert "pynvml" in inspect.getsource(torch.cuda.utilization) or "_get_pynvml_handler" in inspect.getsource(
        torch.cuda.utilization
    )
