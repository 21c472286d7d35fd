// Links every object of one library archive whole (tests/CMakeLists.txt): a symbol that library
// uses from a layer it does not link (tessera_k8s reaching into the simulators, say) is then a
// link error here, even where no program happens to pull that object in. Runs nothing.
int main() { return 0; }
