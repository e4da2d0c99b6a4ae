"""The extrapolation lab of chapter 9: tiny decoders trained side by side on CPU.

* :mod:`~posenc_lib.lab.model`: the decoder, positional scheme as a parameter;
* :mod:`~posenc_lib.lab.tasks`: the copy task and the order-2 Markov source;
* :mod:`~posenc_lib.lab.train`: settings, training, evaluation (with RoPE scaling at inference);
* :mod:`~posenc_lib.lab.run`: the whole grid in worker processes (``make lab``);
* :mod:`~posenc_lib.lab.results`: reading the committed results;
* :mod:`~posenc_lib.lab.nope`: the hand-built NoPE layer that reads position from the mask;
* :mod:`~posenc_lib.lab.probe`: linear probes of position;
* :mod:`~posenc_lib.lab.head_scale`: per-head query scales trained on a frozen model (HeadScale).
"""
