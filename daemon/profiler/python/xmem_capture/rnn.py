"""nn.LSTM/GRU/RNN on device tensors, with the memory model xmem_gpu/rnn.py gives both
captures: its layer stack of step-by-step cells, not oneDNN's fused CPU LSTM.

ATen's `lstm` takes oneDNN on the CPU whenever oneDNN is enabled (use_mkldnn in RNN.cpp);
oneDNN stays off for the call, also for the forms the shared stack leaves to ATen (packed
sequences, projections). GRU and plain RNN share the warning.
"""
import torch

from . import devices


def _handler(warning):
    from xmem_gpu import rnn

    def recurrent(mode, func, args, kwargs):
        if mode.dev_of_args(args, kwargs) != devices.GPU:
            return mode.run_on(devices.HOST, func, args, kwargs)
        warning.on_device_call()
        call = rnn.unpacked_call(rnn.kind_of(func), args, kwargs)
        with torch.backends.mkldnn.flags(enabled=False):
            if call is None:
                return mode.run_on(devices.GPU, func, args, kwargs)
            return mode.run_on(devices.GPU, rnn.layers, call, {})
    return recurrent


def install(note):
    """Routes torch.lstm, gru, rnn_tanh and rnn_relu through the handler; NOTE(key, value)."""
    from xmem_gpu import rnn
    handler = _handler(rnn.WarnOnce(note))
    for function in rnn.functions(torch):
        devices.register_special(function, handler)
