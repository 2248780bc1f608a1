#include "lab/kubelet.h"
