// landscape.vert: one quad covering the viewport; uv (0,0) = bottom-left = (alpha, beta) = (-span, -span).
precision highp float;
attribute vec2 position;   // clip space, [-1, 1]^2
varying vec2 uv;
void main() {
  uv = 0.5 * (position + 1.0);
  gl_Position = vec4(position, 0.0, 1.0);
}
