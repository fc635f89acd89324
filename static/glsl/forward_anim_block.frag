// forward_anim_block.frag: cross-fade between two colour-mapped tensors (RGBA8, mapped on the CPU with the
// page's diverging colormap): texA at mixAB = 0, texB at mixAB = 1; `fade` dims the block toward white.
precision mediump float;
uniform sampler2D texA, texB;
uniform float mixAB, fade;
varying vec2 uv;
void main() {
  vec3 c = mix(texture2D(texA, uv).rgb, texture2D(texB, uv).rgb, mixAB);
  gl_FragColor = vec4(mix(c, vec3(1.0), fade), 1.0);
}
