"""nn.LSTM, nn.GRU and nn.RNN on a GPU, for both captures.

A GPU runs them with cuDNN (`_cudnn_rnn`). For backward it keeps the output, the last hidden
(and cell) state and cuDNN's reserve buffer, and it takes a workspace while it runs. cuDNN
sizes both at run time (cudnnGetRNNTempSpaceSizes); torch shows neither (its own Meta kernel
returns an empty reserve). Neither capture can run cuDNN, so both run ATen's step-by-step
cells, which keep each step's gate activations for backward: what cuDNN's reserve holds for
its backward, in ATen's layout. The exact capture turns oneDNN off for the call: oneDNN's
CPU LSTM keeps a workspace of its own layout, about four times those activations on
pytorch/examples' word language model (docs/capture.md, "Recurrent layers"). Not checked on
a GPU, so the estimate carries a warning.
"""

FUNCTIONS = ("lstm", "gru", "rnn_tanh", "rnn_relu")
WARNING_KEY = "warning_rnn"
WARNING = ("nn.LSTM/GRU/RNN were estimated with ATen's step-by-step cells; a GPU runs them "
           "with cuDNN, whose reserve buffer xmem has not measured, so their share of the "
           "estimate is unverified")


def functions(torch):
    """The torch functions recurrent modules call (`torch._VF.lstm` is `torch.lstm`)."""
    variable_functions = torch._C._VariableFunctions
    return [getattr(variable_functions, name) for name in FUNCTIONS
            if hasattr(variable_functions, name)]


class WarnOnce:
    """Writes the warning once, the first time a recurrent layer runs on the device."""

    def __init__(self, note):
        self._note = note
        self._written = False

    def on_device_call(self):
        if not self._written:
            self._written = True
            self._note(WARNING_KEY, WARNING)
