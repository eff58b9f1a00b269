#version 450
// Reduction pass: each workgroup sums its 256 elements in shared memory and
// writes one partial sum.
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { float s[]; } src;
layout(std430, set = 0, binding = 1) writeonly buffer Dst { float d[]; } dst;

layout(push_constant) uniform Push {
    uint count;
    uint unused;
} pc;

shared float part[256];

void main()
{
    uint i = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    part[l] = i < pc.count ? src.s[i] : 0.0;
    barrier();
    for (uint w = 128u; w > 0u; w >>= 1) {
        if (l < w)
            part[l] += part[l + w];
        barrier();
    }
    if (l == 0u)
        dst.d[gl_WorkGroupID.x] = part[0];
}
