// tanh to float accuracy for any input (GLSL's tanh may overflow through
// exp on some drivers, and 1 - 2 / (e^2|x| + 1) loses digits near 0):
// its odd series below |x| = 1/4 (next term under 3e-9), else that form.
float tanh_f(float x)
{
	float a = abs(x);
	if (a < 0.25) {
		float z = x * x;
		return x * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 +
			z * (62.0 / 2835.0)))));
	}
	float e = exp(2.0 * a);
	return sign(x) * (1.0 - 2.0 / (e + 1.0));
}
