//! Mixture-of-experts grouped matmul and its weight gradient as methods of
//! [`Graph`] (docs/moe.md; since 0.3). It does not hold the plain matmul.
use cudnnfe_sys as sys;

use crate::error::Result;
use crate::graph::Graph;
use crate::options::{c_name, MoeGroupedMatmulOptions};
use crate::types::Tensor;

impl Graph {
    /// `output [1, R, N]` from `token [1, T, K]`, `weight [E, K, N]` and
    /// `first_token_offset` (INT32 `[G, 1, 1]` group starts or `[G + 1, 1,
    /// 1]` boundaries): the rows of group g times `weight[g % E]`.
    /// `token_index` (`[1, R, 1]` INT32) is read by the gather and scatter
    /// modes, `token_ks` by scatter; give `None` for what the mode does not
    /// read. Rows no group writes are unspecified (the CPU reference writes 0).
    pub fn moe_grouped_matmul(
        &mut self,
        token: Tensor,
        weight: Tensor,
        first_token_offset: Tensor,
        token_index: Option<Tensor>,
        token_ks: Option<Tensor>,
        options: &MoeGroupedMatmulOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let uid = |t: Option<Tensor>| t.map_or(0, Tensor::uid);
        let mut output = 0i64;
        // SAFETY: filled options and a valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_moe_grouped_matmul(
                self.raw(),
                token.uid(),
                weight.uid(),
                first_token_offset.uid(),
                uid(token_index),
                uid(token_ks),
                &raw,
                &mut output,
            )
        })?;
        Ok(Tensor::from_uid(output))
    }

    /// The weight gradient of a [`MoeGroupedMatmulMode::None`](crate::MoeGroupedMatmulMode)
    /// grouped matmul: `dweight[e]` = the sum over the groups of expert e of
    /// `token[rows]ᵀ @ doutput[rows]`, `[E, K, N]` column-major in K and N.
    /// E is `first_token_offset`'s dim 0 unless dweight's dims are set.
    pub fn moe_grouped_matmul_backward(
        &mut self,
        doutput: Tensor,
        token: Tensor,
        first_token_offset: Tensor,
        options: &MoeGroupedMatmulOptions,
    ) -> Result<Tensor> {
        let name = c_name(&options.name, "node name")?;
        let raw = options.to_raw(&name);
        let mut dweight = 0i64;
        // SAFETY: filled options and a valid out-pointer.
        self.check(unsafe {
            sys::cudnnfe_graph_add_moe_grouped_matmul_backward(
                self.raw(),
                doutput.uid(),
                token.uid(),
                first_token_offset.uid(),
                &raw,
                &mut dweight,
            )
        })?;
        Ok(Tensor::from_uid(dweight))
    }
}
