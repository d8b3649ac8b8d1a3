"""Shape formulas of the graph ops, shared by verifiers, the ONNX importer and passes."""

from __future__ import annotations

from collections.abc import Sequence


def windowed_dim(size: int, kernel: int, stride: int, pad_begin: int, pad_end: int,
                 dilation: int = 1) -> int:
    """Output size of a convolution or pooling window sliding over one spatial dim."""
    return (size + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1


def spatial_out(hw: Sequence[int], kernels: Sequence[int], strides: Sequence[int],
                pads: Sequence[int], dilation: Sequence[int] = (1, 1)) -> tuple[int, int]:
    """pads are Glow's [top, left, bottom, right] (also ONNX's order for 2-D)."""
    return (
        windowed_dim(hw[0], kernels[0], strides[0], pads[0], pads[2], dilation[0]),
        windowed_dim(hw[1], kernels[1], strides[1], pads[1], pads[3], dilation[1]),
    )


def image_dims(shape: Sequence[int], layout: str) -> tuple[int, int, int, int]:
    """(N, C, H, W) of a 4-D image in `layout`."""
    if layout == "NCHW":
        n, c, h, w = shape
    else:
        n, h, w, c = shape
    return n, c, h, w


def image_shape(n: int, c: int, h: int, w: int, layout: str) -> tuple[int, int, int, int]:
    return (n, c, h, w) if layout == "NCHW" else (n, h, w, c)


def reduced_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    """Glow's batched reductions drop the reduced axes."""
    drop = set(axes)
    return tuple(d for i, d in enumerate(shape) if i not in drop)


def gather_shape(data: Sequence[int], indices: Sequence[int], axis: int) -> tuple[int, ...]:
    return (*data[:axis], *indices, *data[axis + 1:])


def broadcast_compatible(src: Sequence[int], dst: Sequence[int], axis: int) -> bool:
    """Glow's Broadcast: src's dims line up with dst's from `axis`, each equal or 1."""
    if axis < 0 or axis + len(src) > len(dst):
        return False
    return all(s in (1, dst[axis + i]) for i, s in enumerate(src))
