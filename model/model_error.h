/*
 * model/model_error.h - the model's GError domain.
 *
 * Library code reports with these and never exits; the program decides.
 */
#ifndef COWSIM_MODEL_ERROR_H
#define COWSIM_MODEL_ERROR_H

#include <glib.h>

#define MODEL_ERROR (model_error_quark())
GQuark model_error_quark(void);

enum model_error_code {
	MODEL_ERROR_INVALID,      /* an impossible parameter */
	MODEL_ERROR_NO_SPACE,     /* the device cannot hold what was asked */
	MODEL_ERROR_CORRUPT,      /* an invariant checker found a violation */
};

#endif
