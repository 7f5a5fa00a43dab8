"""Geometry of the convolutions a forward runs, for the estimator's cuDNN workspaces.

On a GPU each convolution (forward, and in the backward its grad_input and grad_weight)
asks cuDNN for a workspace sized by the algorithm cuDNN picks, and the caching allocator
serves it. The allocation a CPU run makes says nothing of that algorithm, so the capture
writes what decides it: one `K` record per convolution module and input shape
(docs/trace-format.md), e.g.

    K layer1.0.conv2 conv x=32,64,56,56 w=64,64,3,3 s=1,1 p=1,1 d=1,1 g=1 e=4 t=0

x: input shape, w: weight shape, s/p/d: stride, padding ('same'/'valid' or numbers),
dilation, g: groups, e: element size of the input, t: 1 for a transposed convolution.
"""
import torch

_CONV = torch.nn.modules.conv._ConvNd


def _ints(values):
    if isinstance(values, str):
        return values
    return ",".join(str(int(v)) for v in values)


def conv_record(path, module, inputs):
    """The K record's text for a convolution module's forward, or None for other modules
    or an input that is no tensor."""
    if not isinstance(module, _CONV) or not inputs or not torch.is_tensor(inputs[0]):
        return None
    x, w = inputs[0], module.weight
    if w is None:
        return None
    return "%s conv x=%s w=%s s=%s p=%s d=%s g=%d e=%d t=%d" % (
        path.replace(" ", "_"), _ints(x.shape), _ints(w.shape), _ints(module.stride),
        _ints(module.padding), _ints(module.dilation), int(module.groups),
        x.element_size(), 1 if module.transposed else 0)


class KernelRecorder:
    """Writes a module's K record the first time it runs with a given input shape."""

    def __init__(self, native):
        self._native = native
        self._seen = set()

    def on_forward(self, path, module, inputs):
        if not isinstance(module, _CONV):
            return
        shape = tuple(inputs[0].shape) if inputs and torch.is_tensor(inputs[0]) else None
        key = (id(module), shape, inputs[0].dtype if shape is not None else None)
        if key in self._seen:
            return
        self._seen.add(key)
        text = conv_record(path, module, inputs)
        if text is not None:
            self._native.kernel(text)
