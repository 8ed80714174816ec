"""Peers' test suites on the emulator: ``python -m pyaclnn suite op-plugin PATH``.

op-plugin (Ascend/op-plugin, the aclnn dispatch layer inside torch_npu) keeps one test file per torch
operator (test/test_base_ops, test/test_custom_ops), each comparing npu with the CPU. The runner runs a
user's checkout of them, unchanged, on the emulator (:mod:`.runner`), reports per file what passed and the
first aclnn operator the emulator lacks (:mod:`.report`), and checks a baseline of all-green files
(:mod:`.baseline`), so that the list of green files only grows. The project ships none of op-plugin's code:
the user supplies the checkout (no network needed).
"""
