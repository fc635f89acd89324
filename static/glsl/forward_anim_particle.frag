// forward_anim_particle.frag: a round particle with a dark rim (visible on light and dark blocks).
precision mediump float;
varying vec4 vColor;
void main() {
  float r = length(gl_PointCoord - 0.5) * 2.0;
  if (r > 1.0) discard;
  vec3 c = r > 0.7 ? vec3(0.1) : vColor.rgb;
  gl_FragColor = vec4(c, vColor.a);
}
