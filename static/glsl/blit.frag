// blit.frag: copy a texture 1:1 into a viewport of the same size (tex_cache.js). With quad.vert's uv
// (0,0 = top-left), (uv.x, 1 - uv.y) lands on the texel that the cached pass wrote at this pixel.
precision highp float;
uniform sampler2D tex;
varying vec2 uv;
void main() {
  gl_FragColor = texture2D(tex, vec2(uv.x, 1.0 - uv.y));
}
