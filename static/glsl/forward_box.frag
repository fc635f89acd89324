// forward_box.frag: the front face shows the stage's (rows x columns) values for the selected sample,
// already colour-mapped on the CPU (RGBA8 texture, box-averaged to at most 128 x 128 texels);
// top and side faces are flat shades of the block's tint; `selected` lifts the shade.
precision mediump float;
uniform sampler2D faceTex;
uniform vec3 tint;
uniform float selected;
varying vec2 uv;
varying float vFace;
void main() {
  if (vFace < 0.5) {
    gl_FragColor = vec4(texture2D(faceTex, uv).rgb, 1.0);
  } else {
    float shade = vFace < 1.5 ? 0.92 : 0.72;
    vec3 c = mix(tint * shade, vec3(0.93, 0.45, 0.12) * shade, selected * 0.85);
    gl_FragColor = vec4(c, 1.0);
  }
}
