//! The split batch-norm ops (cudnn-frontend's genstats, bn_finalize and
//! dbn_weight; since 0.3) as methods of [`Graph`]. It does not hold the
//! fused batch norm ([`Graph::batchnorm`] is in graph.rs).
use cudnnfe_sys as sys;

use crate::error::Result;
use crate::graph::Graph;
use crate::options::{c_name, BnFinalizeOptions, DbnWeightOptions, GenstatsOptions};
use crate::types::Tensor;

/// Outputs of [`Graph::genstats`]: per-channel sums, `[1, C, 1, ...]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenstatsOutputs {
    /// Sum of x over every dim but C.
    pub sum: Tensor,
    /// Sum of x * x over every dim but C.
    pub sq_sum: Tensor,
}

/// Outputs of [`Graph::bn_finalize`], each `[1, C, 1, ...]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BnFinalizeOutputs {
    /// `scale * inv_variance`: y = x * eq_scale + eq_bias is the batch norm.
    pub eq_scale: Tensor,
    /// `bias - mean * eq_scale`.
    pub eq_bias: Tensor,
    /// `sum / M`.
    pub mean: Tensor,
    /// `1 / sqrt(var + epsilon)`, var biased.
    pub inv_variance: Tensor,
    /// Updated running mean, when running statistics were given.
    pub next_running_mean: Option<Tensor>,
    /// Updated running variance (Bessel-corrected batch variance), when
    /// running statistics were given.
    pub next_running_var: Option<Tensor>,
}

/// Outputs of [`Graph::dbn_weight`], each `[1, C, 1, ...]`: the weight
/// gradients and the coefficients of `dx = eq_scale_dy * dy + eq_scale_x * x
/// + eq_bias`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbnWeightOutputs {
    /// Sum of dy * xhat per channel.
    pub dscale: Tensor,
    /// Sum of dy per channel.
    pub dbias: Tensor,
    /// `scale * inv_variance`.
    pub eq_scale_dy: Tensor,
    /// `-eq_scale_dy * inv_variance * dscale / M`.
    pub eq_scale_x: Tensor,
    /// `eq_scale_dy * (mean * inv_variance * dscale - dbias) / M`.
    pub eq_bias: Tensor,
}

/// The running statistics [`Graph::bn_finalize`] updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunningStats {
    /// `[1, C, 1, ...]`.
    pub prev_running_mean: Tensor,
    /// `[1, C, 1, ...]`.
    pub prev_running_var: Tensor,
    /// One element: the weight of this batch's statistics.
    pub momentum: Tensor,
}

impl Graph {
    /// Per-channel statistics of `x [N, C, ...]`: `sum[c]` and `sq_sum[c]`
    /// (of x * x) over every dim but C, `[1, C, 1, ...]` FLOAT unless set.
    /// cuDNN runs it fused after a convolution.
    pub fn genstats(&mut self, x: Tensor, options: &GenstatsOptions) -> Result<GenstatsOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (mut sum, mut sq_sum) = (0i64, 0i64);
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_genstats(self.raw(), x.uid(), &raw, &mut sum, &mut sq_sum)
        })?;
        Ok(GenstatsOutputs {
            sum: Tensor::from_uid(sum),
            sq_sum: Tensor::from_uid(sq_sum),
        })
    }

    /// Batch-norm statistics from [`genstats`](Self::genstats)' sums
    /// (cudnn-frontend's bn_finalize). `sum`, `sq_sum`, `scale`, `bias` are
    /// `[1, C, 1, ...]`; `epsilon` and `accum_count` (M, the elements summed
    /// per channel, an integer type) are one-element tensors (scalars do).
    /// `mean = sum / M`, `var = sq_sum / M - mean²`; with `running` the
    /// running statistics are updated as [`batchnorm`](Self::batchnorm)
    /// does (M must then be above 1).
    #[allow(clippy::too_many_arguments)]
    pub fn bn_finalize(
        &mut self,
        sum: Tensor,
        sq_sum: Tensor,
        scale: Tensor,
        bias: Tensor,
        epsilon: Tensor,
        accum_count: Tensor,
        running: Option<RunningStats>,
        options: &BnFinalizeOptions,
    ) -> Result<BnFinalizeOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let (prev_mean, prev_var, momentum) = running.map_or((0, 0, 0), |r| {
            (
                r.prev_running_mean.uid(),
                r.prev_running_var.uid(),
                r.momentum.uid(),
            )
        });
        let mut out = [0i64; 6];
        let [eq_scale, eq_bias, mean, inv_variance, next_mean, next_var] = &mut out;
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_bn_finalize(
                self.raw(),
                sum.uid(),
                sq_sum.uid(),
                scale.uid(),
                bias.uid(),
                epsilon.uid(),
                accum_count.uid(),
                prev_mean,
                prev_var,
                momentum,
                &raw,
                eq_scale,
                eq_bias,
                mean,
                inv_variance,
                next_mean,
                next_var,
            )
        })?;
        Ok(BnFinalizeOutputs {
            eq_scale: Tensor::from_uid(out[0]),
            eq_bias: Tensor::from_uid(out[1]),
            mean: Tensor::from_uid(out[2]),
            inv_variance: Tensor::from_uid(out[3]),
            next_running_mean: Tensor::from_optional_uid(out[4]),
            next_running_var: Tensor::from_optional_uid(out[5]),
        })
    }

    /// Batch-norm backward, weights part (cudnn-frontend's dbn_weight):
    /// from `dy` and `x [N, C, ...]` and the forward's `mean`,
    /// `inv_variance` and `scale` (`[1, C, 1, ...]`), the per-channel
    /// dscale and dbias and the coefficients of the data gradient.
    pub fn dbn_weight(
        &mut self,
        dy: Tensor,
        x: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        scale: Tensor,
        options: &DbnWeightOptions,
    ) -> Result<DbnWeightOutputs> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut out = [0i64; 5];
        let [dscale, dbias, eq_scale_dy, eq_scale_x, eq_bias] = &mut out;
        // SAFETY: filled options and valid out-pointers.
        self.check(unsafe {
            sys::cudnnfe_graph_add_dbn_weight(
                self.raw(),
                dy.uid(),
                x.uid(),
                mean.uid(),
                inv_variance.uid(),
                scale.uid(),
                &raw,
                dscale,
                dbias,
                eq_scale_dy,
                eq_scale_x,
                eq_bias,
            )
        })?;
        Ok(DbnWeightOutputs {
            dscale: Tensor::from_uid(out[0]),
            dbias: Tensor::from_uid(out[1]),
            eq_scale_dy: Tensor::from_uid(out[2]),
            eq_scale_x: Tensor::from_uid(out[3]),
            eq_bias: Tensor::from_uid(out[4]),
        })
    }
}
