// forward_anim_particle.vert: one attention particle at a CSS-pixel position (computed on the CPU from the
// captured particle targets), with its colour, size and opacity.
precision highp float;
attribute vec2 position;
attribute vec4 color;
attribute float size;
uniform vec2 view;
uniform float dpr;
varying vec4 vColor;
void main() {
  vColor = color;
  gl_PointSize = size * dpr;
  gl_Position = vec4(position.x / view.x * 2.0 - 1.0, 1.0 - position.y / view.y * 2.0, 0.0, 1.0);
}
