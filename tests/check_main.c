/* check_main.c - main() for every check program: runs its test_suite(). */
#include "config.h"

#include "testutil.h"

#include <stdlib.h>

int
main(void)
{
	SRunner *sr = srunner_create(test_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
