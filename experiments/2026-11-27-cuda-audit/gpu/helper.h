#define TWICE(v) (2.0f * (v))
