// quad.vert: one quad covering the viewport; uv (0,0) = its top-left corner (tex_cache.js's 1:1 copy).
precision highp float;
attribute vec2 position;   // clip space, [-1, 1]^2
varying vec2 uv;
void main() {
  uv = vec2(0.5 * (position.x + 1.0), 0.5 * (1.0 - position.y));
  gl_Position = vec4(position, 0.0, 1.0);
}
