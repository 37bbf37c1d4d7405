// The formula of every pointwise mode, in the arithmetic type T (float for
// FLOAT and HALF compute, double for DOUBLE and INT32). Operand roles follow
// cudnnfe.h: *_BWD modes get a = dy and b = x and return dx = dy * f'(x).
//
// Choices where cuDNN's documentation leaves room:
//   RELU_FWD  y = x >= lower ? min(x, upper) : lower + slope * (x - lower)
//             (slope 0: plain clipped ReLU; lower 0: leaky ReLU).
//   RELU_BWD  dx = dy for lower < x < upper, slope * dy for x <= lower, and
//             0 for x >= upper (the gradient at a clip point is the outer one).
//   MAX, MIN  fmax/fmin: a NaN operand yields the other operand.
//   MOD       fmod (the sign follows the dividend).
//   SOFTPLUS  log(1 + exp(beta x)) / beta, evaluated without overflow.
#pragma once

#include <cmath>

#include "graph/node.h"

namespace cudnnfe {
namespace cpu {

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// d/dx of GELU (erf form): Phi(x) + x * phi(x).
template <class T>
T gelu_grad(T x) {
  const T inv_sqrt2 = T(0.70710678118654752440);
  const T inv_sqrt_2pi = T(0.39894228040143267794);
  return T(0.5) * (T(1) + std::erf(x * inv_sqrt2)) + x * inv_sqrt_2pi * std::exp(T(-0.5) * x * x);
}

template <class T>
T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588);  // sqrt(2 / pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}

template <class T>
T gelu_tanh_grad(T x) {
  const T k = T(0.79788456080286535588);
  const T t = std::tanh(k * (x + T(0.044715) * x * x * x));
  return T(0.5) * (T(1) + t) +
         T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * T(0.044715) * x * x);
}

template <class T>
T softplus(T x, T beta) {
  const T bx = beta * x;
  return (std::fmax(bx, T(0)) + std::log1p(std::exp(-std::fabs(bx)))) / beta;
}

// Applies `mode` (not GEN_INDEX, which needs the element's position).
// Returns false for a mode it does not know.
template <class T>
bool pointwise_apply(const PointwiseAttrs &p, T a, T b, T c, T *out) {
  const T lower = static_cast<T>(p.relu_lower_clip);
  const T upper = static_cast<T>(p.relu_upper_clip);
  const T slope = static_cast<T>(p.relu_lower_clip_slope);
  const T alpha = static_cast<T>(p.elu_alpha);
  const T softplus_beta = static_cast<T>(p.softplus_beta);
  const T swish_beta = static_cast<T>(p.swish_beta);
  T y;
  switch (p.mode) {
    case CUDNNFE_POINTWISE_ADD: y = a + b; break;
    case CUDNNFE_POINTWISE_ADD_SQUARE: y = a + b * b; break;
    case CUDNNFE_POINTWISE_SUB: y = a - b; break;
    case CUDNNFE_POINTWISE_MUL: y = a * b; break;
    case CUDNNFE_POINTWISE_DIV: y = a / b; break;
    case CUDNNFE_POINTWISE_MAX: y = std::fmax(a, b); break;
    case CUDNNFE_POINTWISE_MIN: y = std::fmin(a, b); break;
    case CUDNNFE_POINTWISE_MOD: y = std::fmod(a, b); break;
    case CUDNNFE_POINTWISE_POW: y = std::pow(a, b); break;
    case CUDNNFE_POINTWISE_ATAN2: y = std::atan2(a, b); break;
    case CUDNNFE_POINTWISE_NEG: y = -a; break;
    case CUDNNFE_POINTWISE_ABS: y = std::fabs(a); break;
    case CUDNNFE_POINTWISE_CEIL: y = std::ceil(a); break;
    case CUDNNFE_POINTWISE_FLOOR: y = std::floor(a); break;
    case CUDNNFE_POINTWISE_RECIPROCAL: y = T(1) / a; break;
    case CUDNNFE_POINTWISE_SQRT: y = std::sqrt(a); break;
    case CUDNNFE_POINTWISE_RSQRT: y = T(1) / std::sqrt(a); break;
    case CUDNNFE_POINTWISE_EXP: y = std::exp(a); break;
    case CUDNNFE_POINTWISE_LOG: y = std::log(a); break;
    case CUDNNFE_POINTWISE_SIN: y = std::sin(a); break;
    case CUDNNFE_POINTWISE_COS: y = std::cos(a); break;
    case CUDNNFE_POINTWISE_TAN: y = std::tan(a); break;
    case CUDNNFE_POINTWISE_ERF: y = std::erf(a); break;
    case CUDNNFE_POINTWISE_IDENTITY: y = a; break;
    case CUDNNFE_POINTWISE_RELU_FWD:
      y = a >= lower ? std::fmin(a, upper) : lower + slope * (a - lower);
      break;
    case CUDNNFE_POINTWISE_TANH_FWD: y = std::tanh(a); break;
    case CUDNNFE_POINTWISE_SIGMOID_FWD: y = sigmoid(a); break;
    case CUDNNFE_POINTWISE_ELU_FWD: y = a > T(0) ? a : alpha * std::expm1(a); break;
    case CUDNNFE_POINTWISE_GELU_FWD:
      y = T(0.5) * a * (T(1) + std::erf(a * T(0.70710678118654752440)));
      break;
    case CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD: y = gelu_tanh(a); break;
    case CUDNNFE_POINTWISE_SOFTPLUS_FWD: y = softplus(a, softplus_beta); break;
    case CUDNNFE_POINTWISE_SWISH_FWD: y = a * sigmoid(swish_beta * a); break;
    case CUDNNFE_POINTWISE_RELU_BWD: y = b <= lower ? slope * a : (b >= upper ? T(0) : a); break;
    case CUDNNFE_POINTWISE_TANH_BWD: {
      const T t = std::tanh(b);
      y = a * (T(1) - t * t);
      break;
    }
    case CUDNNFE_POINTWISE_SIGMOID_BWD: {
      const T s = sigmoid(b);
      y = a * s * (T(1) - s);
      break;
    }
    case CUDNNFE_POINTWISE_ELU_BWD: y = b > T(0) ? a : a * alpha * std::exp(b); break;
    case CUDNNFE_POINTWISE_GELU_BWD: y = a * gelu_grad(b); break;
    case CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD: y = a * gelu_tanh_grad(b); break;
    case CUDNNFE_POINTWISE_SOFTPLUS_BWD: y = a * sigmoid(softplus_beta * b); break;
    case CUDNNFE_POINTWISE_SWISH_BWD: {
      const T s = sigmoid(swish_beta * b);
      y = a * (s + swish_beta * b * s * (T(1) - s));
      break;
    }
    case CUDNNFE_POINTWISE_CMP_EQ: y = a == b; break;
    case CUDNNFE_POINTWISE_CMP_NEQ: y = a != b; break;
    case CUDNNFE_POINTWISE_CMP_GT: y = a > b; break;
    case CUDNNFE_POINTWISE_CMP_GE: y = a >= b; break;
    case CUDNNFE_POINTWISE_CMP_LT: y = a < b; break;
    case CUDNNFE_POINTWISE_CMP_LE: y = a <= b; break;
    case CUDNNFE_POINTWISE_LOGICAL_AND: y = a != T(0) && b != T(0); break;
    case CUDNNFE_POINTWISE_LOGICAL_OR: y = a != T(0) || b != T(0); break;
    case CUDNNFE_POINTWISE_LOGICAL_NOT: y = a == T(0); break;
    case CUDNNFE_POINTWISE_BINARY_SELECT: y = c != T(0) ? a : b; break;
    default: return false;
  }
  *out = y;
  return true;
}

}  // namespace cpu
}  // namespace cudnnfe
