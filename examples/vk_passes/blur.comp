#version 450
// Memory-bound pass: a box filter of radius `radius` from src into dst.
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { float s[]; } src;
layout(std430, set = 0, binding = 1) writeonly buffer Dst { float d[]; } dst;

layout(push_constant) uniform Push {
    uint count;
    uint radius;
} pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count)
        return;
    int r = int(pc.radius);
    int last = int(pc.count) - 1;
    float acc = 0.0;
    for (int o = -r; o <= r; o++)
        acc += src.s[clamp(int(i) + o, 0, last)];
    dst.d[i] = acc / float(2 * r + 1);
}
