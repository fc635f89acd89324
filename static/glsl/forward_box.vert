// forward_box.vert: one face of a stage's block. The unit cube [0,1]^3 is scaled and moved to the block's
// place; `face` says which face (0 front = the heatmap, 1 top, 2 right side) for the fragment shader.
precision highp float;
attribute vec3 position;
attribute float face;
uniform mat4 viewProj;
uniform vec3 origin, size;
varying vec2 uv;
varying float vFace;
void main() {
  vec3 p = origin + position * size;
  uv = vec2(position.x, 1.0 - position.y);   // front face: column 0 at the left, row 0 at the top
  vFace = face;
  gl_Position = viewProj * vec4(p, 1.0);
}
