// attention_weights.frag: rebuild one head's attention weights from the captured q, k and lse
// (docs/format.md, op attention_weights): w[i, j] = exp(scale * q_i . k_j - lse_i), w[i, i] = 0 when the
// diagonal is masked. q and k are RGBA float textures, one row per time step, head h in texels
// [h * texPerHead, (h + 1) * texPerHead); lse is a (heads x L) luminance float texture.
// The weight goes through a colour scale (0 linear, 1 square root, 2 log10) and a 256-entry LUT.
precision highp float;
uniform sampler2D qTex, kTex, lseTex, lut;
uniform float L, head, heads, texPerHead, texWidth, scale;
uniform bool maskDiagonal;
uniform int mode;
uniform float vmax, logMin, logMax;
varying vec2 uv;
const int MAX_TEX = 16;          // up to 64 dims per head
void main() {
  float i = min(floor(uv.y * L), L - 1.0);      // query (row)
  float j = min(floor(uv.x * L), L - 1.0);      // key (column)
  float w;
  if (maskDiagonal && i == j) {
    w = 0.0;
  } else {
    float s = 0.0;
    for (int d = 0; d < MAX_TEX; d++) {
      if (float(d) >= texPerHead) break;
      float u = (head * texPerHead + float(d) + 0.5) / texWidth;
      s += dot(texture2D(qTex, vec2(u, (i + 0.5) / L)), texture2D(kTex, vec2(u, (j + 0.5) / L)));
    }
    float lse = texture2D(lseTex, vec2((i + 0.5) / L, (head + 0.5) / heads)).r;
    w = exp(s * scale - lse);
  }
  float t;
  if (mode == 2) t = (log(max(w, 1e-30)) / log(10.0) - logMin) / (logMax - logMin);
  else if (mode == 1) t = sqrt(w / vmax);
  else t = w / vmax;
  float idx = floor(clamp(t, 0.0, 1.0) * 255.0 + 0.5);
  gl_FragColor = vec4(texture2D(lut, vec2((idx + 0.5) / 256.0, 0.5)).rgb, 1.0);
}
