"""Iteration, phase and module attribution, and stopping after N optimizer steps.

Iteration n starts when the training loop first shows itself (a DataLoader batch, a forward
with gradients on, zero_grad, backward or step) and ends when optimizer step n returns;
docs/trace-format.md. Phases: data (DataLoader fetch and the batch's .cuda()), forward (from
the outermost module call), backward (torch.autograd.backward/grad), optimizer (step),
zero_grad (Optimizer/Module.zero_grad), other (between, e.g. the LR scheduler).
"""
import functools
import inspect
import types
import weakref

import torch

from . import devices
from .kernels import KernelRecorder


class Tracker:
    def __init__(self, native, steps, on_step, on_last_step):
        self.native = native
        self.steps = steps
        self.iteration = 0
        self.steps_done = 0
        self.on_step = on_step
        self.on_last_step = on_last_step
        self.zero_grad_set_to_none = None
        self._module_stack = []
        self._names = weakref.WeakKeyDictionary()  # module -> (interned path id, path)
        self._kernels = KernelRecorder(native)

    # -- iterations and phases -------------------------------------------------------------
    def begin_training(self):
        if self.iteration == 0:
            self.iteration = 1
            self.native.iteration(1)

    def phase(self, name):
        self.native.phase(name)

    def step_finished(self):
        self.steps_done += 1
        self.on_step(self.steps_done)
        if self.steps_done >= self.steps:
            self.on_last_step()
            return
        self.iteration += 1
        self.native.iteration(self.iteration)
        self.phase("other")

    # -- modules ---------------------------------------------------------------------------
    def _name(self, module):
        """(interned id, path) of a module."""
        named = self._names.get(module)
        if named is None:
            # A module seen first outside any parent forward is a root: name its whole tree.
            parent = self._module_stack[-1][0] if self._module_stack else None
            if parent is None:
                for name, sub in module.named_modules():
                    if sub not in self._names:
                        self._intern(sub, name or type(module).__name__)
            named = self._names.get(module) or self._intern(module, type(module).__name__)
        return named

    def _intern(self, module, path):
        self._names[module] = (self.native.intern(path), path)
        return self._names[module]

    def forward_pre_hook(self, module, inputs):
        if not self._module_stack:
            if self.iteration == 0 and torch.is_grad_enabled():
                self.begin_training()
            self.phase("forward" if self.iteration > 0 else "setup")
        nid, path = self._name(module)
        self._module_stack.append((module, nid))
        self.native.set_module(nid)
        self._kernels.on_forward(path, module, inputs)

    def forward_hook(self, module, inputs, output):
        if self._module_stack and self._module_stack[-1][0] is module:
            self._module_stack.pop()
        self.native.set_module(self._module_stack[-1][1] if self._module_stack else 0)

    def install(self, torch_mod):
        mm = torch_mod.nn.modules.module
        mm.register_module_forward_pre_hook(self.forward_pre_hook)
        mm.register_module_forward_hook(self.forward_hook)
        self._wrap_backward(torch_mod)
        self._wrap_zero_grad(torch_mod)
        self._wrap_optimizer_init(torch_mod)
        self._wrap_dataloader(torch_mod)

    # -- training-loop entry points ----------------------------------------------------------
    def _wrap_backward(self, torch_mod):
        tracker = self
        for name in ("backward", "grad"):
            original = getattr(torch_mod.autograd, name)

            @functools.wraps(original)
            def wrapper(*args, __original=original, **kwargs):
                tracker.begin_training()
                tracker.phase("backward")
                tracker._module_stack.clear()  # a forward that raised never popped
                tracker.native.set_module(0)
                return __original(*args, **kwargs)

            setattr(torch_mod.autograd, name, wrapper)

    def _wrap_zero_grad(self, torch_mod):
        tracker = self
        default = inspect.signature(torch_mod.optim.Optimizer.zero_grad).parameters["set_to_none"].default

        def wrap(original):
            @functools.wraps(original)
            def zero_grad(self, *args, **kwargs):
                if tracker.zero_grad_set_to_none is None:
                    tracker.zero_grad_set_to_none = bool(kwargs.get("set_to_none", args[0] if args else default))
                tracker.begin_training()
                tracker.phase("zero_grad")
                try:
                    return original(self, *args, **kwargs)
                finally:
                    tracker.phase("other")
            return zero_grad

        torch_mod.optim.Optimizer.zero_grad = wrap(torch_mod.optim.Optimizer.zero_grad)
        torch_mod.nn.Module.zero_grad = wrap(torch_mod.nn.Module.zero_grad)

    def _wrap_optimizer_init(self, torch_mod):
        """Wraps each optimizer's step as a bound method of the instance: LR schedulers
        re-wrap `optimizer.step` and need its __self__/__func__."""
        tracker = self
        original_init = torch_mod.optim.Optimizer.__init__

        @functools.wraps(original_init)
        def __init__(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            if "step" in self.__dict__:
                return

            def step(opt, *a, **k):
                tracker.begin_training()
                tracker.phase("optimizer")
                out = type(opt).step(opt, *a, **k)
                tracker.step_finished()
                return out

            self.step = types.MethodType(step, self)

        torch_mod.optim.Optimizer.__init__ = __init__

    def _wrap_dataloader(self, torch_mod):
        tracker = self
        base = torch_mod.utils.data.dataloader._BaseDataLoaderIter
        original = base.__next__

        @functools.wraps(original)
        def __next__(self):
            tracker.begin_training()
            tracker.phase("data")
            with devices.host_scope():
                return original(self)

        base.__next__ = __next__
