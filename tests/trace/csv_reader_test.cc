#include "trace/csv_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

constexpr char kNodeHeader[] = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr char kPodHeader[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
constexpr char kFullPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

// The error message of a read that must fail ("" if it succeeded, which fails the test).
template <typename T>
std::string ErrorOf(const Result<T>& r) {
  EXPECT_FALSE(r.ok()) << "expected an error";
  return r.ok() ? std::string() : r.error().message;
}

std::string NodeError(const std::string& text) { return ErrorOf(ReadNodeCsv(text, "nodes.csv")); }
std::string PodError(const std::string& text) { return ErrorOf(ReadPodCsv(text, "pods.csv")); }

TEST(CsvReaderTest, ReadsNodes) {
  const std::string text = std::string(kNodeHeader) +
                           "n0,32000,262144,0,\n"
                           "n1,64000,262144,2,P100\n"
                           "n2,96000,786432,8,V100M32\n"
                           "n3,96000,393216,8,G2\n";
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(text, "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 4u);
  const NodeSpec& n0 = (*nodes)[0];
  EXPECT_EQ(n0.name, "n0");
  EXPECT_EQ(n0.cpu_milli, 32000);
  EXPECT_EQ(n0.memory_mib, 262144);
  EXPECT_EQ(n0.gpu_count, 0);
  EXPECT_EQ(n0.gpu_model, "");
  EXPECT_EQ(n0.gpu_memory_mib, 0);
  const NodeSpec& n1 = (*nodes)[1];
  EXPECT_EQ(n1.name, "n1");
  EXPECT_EQ(n1.cpu_milli, 64000);
  EXPECT_EQ(n1.gpu_count, 2);
  EXPECT_EQ(n1.gpu_model, "P100");
  EXPECT_EQ(n1.gpu_memory_mib, 16384);
  EXPECT_EQ((*nodes)[2].gpu_memory_mib, 32768);
  EXPECT_EQ((*nodes)[3].gpu_model, "G2");
  EXPECT_EQ((*nodes)[3].gpu_memory_mib, 0);  // unknown model: memory not enforced
}

TEST(CsvReaderTest, KnownGpuMemory) {
  EXPECT_EQ(KnownGpuMemoryMib("V100M16"), 16384);
  EXPECT_EQ(KnownGpuMemoryMib("V100M32"), 32768);
  EXPECT_EQ(KnownGpuMemoryMib("P100"), 16384);
  EXPECT_EQ(KnownGpuMemoryMib("T4"), 15360);
  EXPECT_EQ(KnownGpuMemoryMib("A10"), 24576);
  EXPECT_EQ(KnownGpuMemoryMib("G3"), 0);
  EXPECT_EQ(KnownGpuMemoryMib(""), 0);
}

TEST(CsvReaderTest, ColumnsByNameExtraColumnsIgnored) {
  const std::string text =
      "model,gpu,extra,memory_mib,cpu_milli,sn\n"
      "T4,2,whatever,524288,104000,t4-node\n";
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(text, "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].name, "t4-node");
  EXPECT_EQ((*nodes)[0].cpu_milli, 104000);
  EXPECT_EQ((*nodes)[0].memory_mib, 524288);
  EXPECT_EQ((*nodes)[0].gpu_count, 2);
  EXPECT_EQ((*nodes)[0].gpu_model, "T4");
  EXPECT_EQ((*nodes)[0].gpu_memory_mib, 15360);
}

TEST(CsvReaderTest, ReadsFullPods) {
  const std::string text = std::string(kFullPodHeader) +
                           "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                           "p1,6000,12288,1,460,T4,BE,Failed,427061,,\n"
                           "p2,88000,360448,8,1000,V100M16||V100M32|,LS,Running,5,10,7\n"
                           "p3,4000,8192,0,0,,Burstable,Succeeded,1,2,\n";
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 4u);
  const PodSpec& p0 = (*pods)[0];
  EXPECT_EQ(p0.name, "p0");
  EXPECT_EQ(p0.cpu_milli, 12000);
  EXPECT_EQ(p0.memory_mib, 16384);
  EXPECT_EQ(p0.gpu_count, 1);
  EXPECT_EQ(p0.gpu_milli, 1000);
  EXPECT_EQ(p0.gpu_memory_mib, 0);
  EXPECT_EQ(p0.gpu_spec, "");
  EXPECT_EQ(p0.qos, "LS");
  EXPECT_EQ(p0.creation_time, 0);
  EXPECT_EQ(p0.deletion_time, 12537496);
  EXPECT_EQ(p0.scheduled_time, 0);
  const PodSpec& p1 = (*pods)[1];
  EXPECT_EQ(p1.gpu_milli, 460);
  EXPECT_EQ(p1.gpu_spec, "T4");
  EXPECT_EQ(p1.qos, "BE");
  EXPECT_EQ(p1.creation_time, 427061);
  EXPECT_EQ(p1.deletion_time, -1);
  EXPECT_EQ(p1.scheduled_time, -1);
  const PodSpec& p2 = (*pods)[2];
  EXPECT_EQ(p2.gpu_count, 8);
  EXPECT_EQ(p2.TotalGpuMilli(), 8000);
  EXPECT_EQ(p2.gpu_spec, "V100M16|V100M32");
  EXPECT_EQ(p2.scheduled_time, 7);
  const PodSpec& p3 = (*pods)[3];
  EXPECT_EQ(p3.gpu_count, 0);
  EXPECT_EQ(p3.gpu_milli, 0);
  EXPECT_EQ(p3.qos, "Burstable");
  EXPECT_EQ(p3.scheduled_time, -1);
}

TEST(CsvReaderTest, ReadsRequiredColumnsOnly) {
  const std::string text = std::string(kPodHeader) + "a,6000,12288,1,460\nb,64000,1,4,1000\n";
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "multigpu.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].gpu_milli, 460);
  EXPECT_EQ((*pods)[0].qos, "");
  EXPECT_EQ((*pods)[0].gpu_spec, "");
  EXPECT_EQ((*pods)[0].creation_time, -1);
  EXPECT_EQ((*pods)[0].deletion_time, -1);
  EXPECT_EQ((*pods)[0].scheduled_time, -1);
  EXPECT_EQ((*pods)[1].gpu_count, 4);
}

TEST(CsvReaderTest, CpuOnlyPodWithStrayGpuMilliIsCpuOnly) {
  Result<std::vector<PodSpec>> pods =
      ReadPodCsv(std::string(kPodHeader) + "a,1000,10,0,500\n", "p");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_EQ((*pods)[0].gpu_count, 0);
  EXPECT_EQ((*pods)[0].gpu_milli, 0);
}

TEST(CsvReaderTest, QuotesCrlfBlankLinesAndSpaces) {
  const std::string text =
      "\xEF\xBB\xBF\"name\",cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\r\n"
      "\r\n"
      "\"pod, \"\"quoted\"\"\",1000, 2048 ,1,250,\"T4|\"\r\n"
      "   \n"
      "plain,2000,4096,0,0,\r\n";
  Result<std::vector<PodSpec>> pods = ReadPodCsv(text, "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].name, "pod, \"quoted\"");
  EXPECT_EQ((*pods)[0].memory_mib, 2048);
  EXPECT_EQ((*pods)[0].gpu_milli, 250);
  EXPECT_EQ((*pods)[0].gpu_spec, "T4");
  EXPECT_EQ((*pods)[1].name, "plain");
  EXPECT_EQ((*pods)[1].cpu_milli, 2000);
  EXPECT_EQ((*pods)[1].gpu_spec, "");
}

TEST(CsvReaderTest, NoTrailingNewline) {
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(std::string(kNodeHeader) + "n,1,2,1,T4", "n");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  EXPECT_EQ((*nodes)[0].gpu_model, "T4");
}

TEST(CsvReaderTest, LineNumbersArePhysicalLines) {
  // Line 1 header, 2 blank, 3 good, 4 a quoted field spanning two lines, 6 bad.
  const std::string text = std::string(kPodHeader) +
                           "\n"
                           "a,1,1,0,0\n"
                           "\"b\nc\",1,1,0,0\n"
                           "d,1,x,0,0\n";
  EXPECT_EQ(PodError(text), "pods.csv:6: field 'memory_mib': not an integer: 'x'");
}

TEST(CsvReaderTest, ErrorMissingColumn) {
  EXPECT_EQ(PodError("name,cpu_milli,num_gpu,gpu_milli\na,1,0,0\n"),
            "pods.csv:1: field 'memory_mib': missing column in the header");
  EXPECT_EQ(NodeError("sn,cpu_milli,memory_mib,gpu\nn,1,1,0\n"),
            "nodes.csv:1: field 'model': missing column in the header");
}

TEST(CsvReaderTest, ErrorDuplicateColumn) {
  EXPECT_EQ(NodeError("sn,cpu_milli,memory_mib,gpu,model,gpu\nn,1,1,0,,0\n"),
            "nodes.csv:1: field 'gpu': duplicate column in the header");
}

TEST(CsvReaderTest, ErrorWrongNumberOfFields) {
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,0,0\nb,1,1,0\n"),
            "pods.csv:3: field 'gpu_milli': missing (row has 4 fields, header has 5)");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,0,0,7\n"),
            "pods.csv:2: field '#6': unexpected extra field (row has 6 fields, header has 5)");
}

TEST(CsvReaderTest, ErrorNotAnInteger) {
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,0,0\nb,abc,1,0,0\n"),
            "pods.csv:3: field 'cpu_milli': not an integer: 'abc'");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1.5,1,0,0\n"),
            "pods.csv:2: field 'cpu_milli': not an integer: '1.5'");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,,1,0,0\n"),
            "pods.csv:2: field 'cpu_milli': empty, expected an integer");
  EXPECT_EQ(PodError(std::string(kFullPodHeader) + "a,1,1,0,0,,LS,Running,soon,,\n"),
            "pods.csv:2: field 'creation_time': not an integer: 'soon'");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,99999999999999999999,0,0\n"),
            "pods.csv:2: field 'memory_mib': out of range: '99999999999999999999'");
}

TEST(CsvReaderTest, ErrorNegative) {
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,-5,0,0\n"),
            "pods.csv:2: field 'memory_mib': negative: -5");
  EXPECT_EQ(NodeError(std::string(kNodeHeader) + "n,-1,1,0,\n"),
            "nodes.csv:2: field 'cpu_milli': negative: -1");
  EXPECT_EQ(PodError(std::string(kFullPodHeader) + "a,1,1,0,0,,LS,Running,1,-3,\n"),
            "pods.csv:2: field 'deletion_time': negative: -3");
}

TEST(CsvReaderTest, ErrorAbsurdValues) {
  EXPECT_NE(NodeError(std::string(kNodeHeader) + "n,2000000000000,1,0,\n")
                .find("nodes.csv:2: field 'cpu_milli': too large: 2000000000000 (at most "),
            std::string::npos);
  EXPECT_NE(PodError(std::string(kPodHeader) + "a,1,2000000000000,0,0\n")
                .find("pods.csv:2: field 'memory_mib': too large"),
            std::string::npos);
  EXPECT_EQ(NodeError(std::string(kNodeHeader) + "n,1,1,17,G2\n"),
            "nodes.csv:2: field 'gpu': too large: 17 (at most 16)");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,17,1000\n"),
            "pods.csv:2: field 'num_gpu': too large: 17 (at most 16)");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,1,1001\n"),
            "pods.csv:2: field 'gpu_milli': too large: 1001 (at most 1000)");
}

TEST(CsvReaderTest, ErrorGpuMilli) {
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,1,0\n"),
            "pods.csv:2: field 'gpu_milli': is 0, but num_gpu is 1 (need 1..1000)");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,1,500\nb,1,1,2,500\n"),
            "pods.csv:3: field 'gpu_milli': must be 1000 for a multi-GPU pod (num_gpu 2), got 500");
}

TEST(CsvReaderTest, ErrorGpuNodeWithoutModel) {
  EXPECT_EQ(NodeError(std::string(kNodeHeader) + "n0,1,1,0,\nn1,1,1,4,\n"),
            "nodes.csv:3: field 'model': empty, but the node has 4 GPUs");
}

TEST(CsvReaderTest, ErrorDuplicateNames) {
  EXPECT_EQ(NodeError(std::string(kNodeHeader) + "n0,1,1,0,\nn1,1,1,0,\nn0,1,1,0,\n"),
            "nodes.csv:4: field 'sn': duplicate node name 'n0' (first on line 2)");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,0,0\na,1,1,0,0\n"),
            "pods.csv:3: field 'name': duplicate pod name 'a' (first on line 2)");
  EXPECT_EQ(PodError(std::string(kPodHeader) + ",1,1,0,0\n"),
            "pods.csv:2: field 'name': empty pod name");
}

TEST(CsvReaderTest, ErrorEmptyFile) {
  EXPECT_EQ(PodError(""), "pods.csv:1: field 'name': missing column (the file is empty)");
  EXPECT_EQ(NodeError("\n\n"), "nodes.csv:1: field 'sn': missing column (the file is empty)");
  EXPECT_EQ(PodError(kPodHeader),
            "pods.csv:1: field 'name': no rows after the header (the list is empty)");
}

TEST(CsvReaderTest, ErrorUnterminatedQuote) {
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,1,1,0,0\n\"b,1,1,0,0\n"),
            "pods.csv:3: field 'name': unterminated quoted field");
  EXPECT_EQ(PodError(std::string(kPodHeader) + "a,\"1\"x,1,0,0\n"),
            "pods.csv:2: field 'cpu_milli': text after the closing quote");
}

// --- The shared Alibaba GPU trace (cluster-trace-gpu-v2023): every file must load. ---

std::string DataDir() { return TESSERA_DATA_DIR; }

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Non-blank lines after the header, counted independently of the reader.
size_t DataLines(const std::string& text) {
  size_t lines = 0;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    if (!line.empty() && line != "\r") ++lines;
  }
  return lines;
}

TEST(CsvReaderDataTest, AllSharedFilesLoad) {
  const std::filesystem::path dir = DataDir();
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no data at " << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files.size(), 26u);
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    const std::string text = ReadFile(path);
    SCOPED_TRACE(name);
    if (name.starts_with("openb_node_list")) {
      Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(text, name);
      ASSERT_TRUE(nodes.ok()) << nodes.error().message;
      EXPECT_EQ(nodes->size(), DataLines(text));
    } else {
      ASSERT_TRUE(name.starts_with("openb_pod_list"));
      Result<std::vector<PodSpec>> pods = ReadPodCsv(text, name);
      ASSERT_TRUE(pods.ok()) << pods.error().message;
      EXPECT_EQ(pods->size(), DataLines(text));
    }
  }
}

TEST(CsvReaderDataTest, GpuNodeList) {
  const std::filesystem::path path = DataDir() + "/openb_node_list_gpu_node.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no data at " << path;
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(ReadFile(path), "gpu_node.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  EXPECT_EQ(nodes->size(), 1213u);
  int gpus = 0;
  for (const NodeSpec& n : *nodes) {
    gpus += n.gpu_count;
    EXPECT_GT(n.gpu_count, 0) << n.name;
    EXPECT_FALSE(n.gpu_model.empty()) << n.name;
  }
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ((*nodes)[0].name, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].gpu_model, "P100");
  EXPECT_EQ((*nodes)[0].gpu_memory_mib, 16384);
}

TEST(CsvReaderDataTest, AllNodeList) {
  const std::filesystem::path path = DataDir() + "/openb_node_list_all_node.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no data at " << path;
  Result<std::vector<NodeSpec>> nodes = ReadNodeCsv(ReadFile(path), "all_node.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  EXPECT_EQ(nodes->size(), 1523u);
  const auto cpu_only = std::count_if(nodes->begin(), nodes->end(),
                                      [](const NodeSpec& n) { return n.gpu_count == 0; });
  EXPECT_EQ(cpu_only, 1523 - 1213);
}

TEST(CsvReaderDataTest, DefaultPodList) {
  const std::filesystem::path path = DataDir() + "/openb_pod_list_default.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no data at " << path;
  Result<std::vector<PodSpec>> pods = ReadPodCsv(ReadFile(path), "default.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 8152u);
  const PodSpec& p0 = (*pods)[0];
  EXPECT_EQ(p0.name, "openb-pod-0000");
  EXPECT_EQ(p0.cpu_milli, 12000);
  EXPECT_EQ(p0.memory_mib, 16384);
  EXPECT_EQ(p0.gpu_count, 1);
  EXPECT_EQ(p0.gpu_milli, 1000);
  EXPECT_EQ(p0.qos, "LS");
  EXPECT_EQ(p0.creation_time, 0);
  EXPECT_EQ(p0.deletion_time, 12537496);
  int cpu_only = 0, multi = 0;
  for (const PodSpec& p : *pods) {
    if (p.gpu_count == 0) ++cpu_only;
    if (p.gpu_count > 1) ++multi;
  }
  EXPECT_EQ(cpu_only, 1088);
  EXPECT_EQ(multi, 75);
}

TEST(CsvReaderDataTest, MultiGpuPodList) {
  const std::filesystem::path path = DataDir() + "/openb_pod_list_multigpu50.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no data at " << path;
  Result<std::vector<PodSpec>> pods = ReadPodCsv(ReadFile(path), "multigpu50.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_EQ(pods->size(), 9061u);
  for (const PodSpec& p : *pods) {
    EXPECT_EQ(p.creation_time, -1);
    if (p.gpu_count > 1) {
      EXPECT_EQ(p.gpu_milli, 1000) << p.name;
    }
  }
}

TEST(CsvReaderDataTest, GpuSpecPodList) {
  const std::filesystem::path path = DataDir() + "/openb_pod_list_gpuspec33.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no data at " << path;
  Result<std::vector<PodSpec>> pods = ReadPodCsv(ReadFile(path), "gpuspec33.csv");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_EQ(pods->size(), 8152u);
  const auto constrained = std::count_if(pods->begin(), pods->end(),
                                         [](const PodSpec& p) { return !p.gpu_spec.empty(); });
  EXPECT_EQ(constrained, 8152 - 5764);
}

}  // namespace
}  // namespace tessera
