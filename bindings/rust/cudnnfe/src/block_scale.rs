//! Block-scale quantization (microscaling, MXFP8) as methods of [`Graph`]:
//! quantize to FP8 values with one FP8_E8M0 scale per block, and back. It
//! does not hold the per-tensor FP8 scaling of attention (graph.rs).
use cudnnfe_sys as sys;

use crate::error::Result;
use crate::graph::Graph;
use crate::options::{c_name, BlockScaleOptions};
use crate::types::Tensor;

/// Outputs of [`Graph::block_scale_quantize`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockScaleOutputs {
    /// The FP8 values, x's dims.
    pub y: Tensor,
    /// One FP8_E8M0 scale (a power of two) per block: x's dims with dim
    /// `axis` divided by `block_size`.
    pub scale: Tensor,
}

impl Graph {
    /// Block-scale quantize of `x` (FLOAT, HALF or BFLOAT16): per block,
    /// `scale = amax / max_finite(y type)` rounded up to a power of two,
    /// `y = x / scale` rounded to nearest even, saturating. cuDNN runs it on
    /// Blackwell GPUs only.
    pub fn block_scale_quantize(
        &mut self,
        x: Tensor,
        options: &BlockScaleOptions,
    ) -> Result<BlockScaleOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut y, mut scale) = (0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_block_scale_quantize(
                self.raw(),
                x.uid(),
                &raw,
                &mut y,
                &mut scale,
            )
        })?;
        Ok(BlockScaleOutputs {
            y: Tensor::from_uid(y),
            scale: Tensor::from_uid(scale),
        })
    }

    /// Block-scale dequantize: `y = x * scale[block]` for FP8 `x` and its
    /// FP8_E8M0 `scale`. Reads the options' block_size, axis and name; y's
    /// type is the graph's io type unless set (else FLOAT).
    pub fn block_scale_dequantize(
        &mut self,
        x: Tensor,
        scale: Tensor,
        options: &BlockScaleOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut y = 0i64;
        // SAFETY: filled options and a valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_block_scale_dequantize(
                self.raw(),
                x.uid(),
                scale.uid(),
                &raw,
                &mut y,
            )
        })?;
        Ok(Tensor::from_uid(y))
    }
}
