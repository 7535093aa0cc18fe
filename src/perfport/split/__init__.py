"""Layer 5: splitting one NDRange across devices (Erdem et al. 2018).

``pruning``: each device's legal configurations and those legal on all of them (Tables 1-2);
``plan``: split factors (Eq. 4), whole work-groups per device (Eqs. 5-9), the theoretical
time (Algorithm 1); ``execute``: the parts run concurrently, a queue per device;
``subbuffers``: CPU devices of one OpenCL context share sub-buffers of one parent per array;
``probe``: the first split planned from each device's overhead + cost line (``--plan
lines``); ``split``: what ``perfport split`` does, end to end. A kernel splits as its KernelSpec's
``split`` declares (``perfport._core.splitting``).
"""
