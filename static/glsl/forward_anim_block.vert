// forward_anim_block.vert: one block of the animated forward pass, a textured rectangle in CSS pixels.
// corner in [0,1]^2; the block is `size` = (time extent, feature extent) pixels around `centre`, turned by
// `angle` (counter-clockwise on screen: at pi/2 time runs upwards and feature 0 sits at the left).
precision highp float;
attribute vec2 corner;
uniform vec2 view, centre, size;
uniform float angle;
varying vec2 uv;
void main() {
  vec2 l = (corner - 0.5) * size;                    // x: time, y: feature (rows downwards)
  float c = cos(angle), s = sin(angle);
  vec2 p = centre + vec2(c * l.x + s * l.y, -s * l.x + c * l.y);
  uv = corner;                                       // texel row 0 (feature 0) at corner.y = 0
  gl_Position = vec4(p.x / view.x * 2.0 - 1.0, 1.0 - p.y / view.y * 2.0, 0.0, 1.0);
}
