#version 450
// ALU-bound pass: iterate a cheap chaotic map on every element in place.
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Data { float v[]; } data;

layout(push_constant) uniform Push {
    uint count;
    uint iterations;
    float k;
} pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count)
        return;
    float x = data.v[i];
    for (uint n = 0u; n < pc.iterations; n++)
        x = fract(x * pc.k + sin(x) * 0.5 + 0.25);
    data.v[i] = x;
}
