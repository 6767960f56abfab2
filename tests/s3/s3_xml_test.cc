// The S3 XML reader: ListObjectsV2 pages (keys with entities, pagination fields) and error bodies.
#include <gtest/gtest.h>

#include "s3/s3_xml.h"
#include "schema/status.h"

namespace trialdb {
namespace {

TEST(S3Xml, ParsesAListPageWithEscapedKeys) {
  const char* xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix>trial/</Prefix><KeyCount>3</KeyCount><MaxKeys>3</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <Contents><Key>trial/a &amp; b.json</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;0123&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>trial/&lt;x&gt;&#39;&apos;&#x2F;&#233;&#x1F600;</Key><Size>0</Size></Contents>
  <Contents><Key> spaced </Key><Size>18446744073709551615</Size></Contents>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
</ListBucketResult>)";
  S3ListPage page = parse_list_objects_v2(xml);
  ASSERT_EQ(page.objects.size(), 3u);
  EXPECT_EQ(page.objects[0].key, "trial/a & b.json");
  EXPECT_EQ(page.objects[0].size, 12u);
  EXPECT_EQ(page.objects[1].key, "trial/<x>''/\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(page.objects[1].size, 0u);
  EXPECT_EQ(page.objects[2].key, " spaced ");  // key text is taken verbatim
  EXPECT_EQ(page.objects[2].size, 18446744073709551615ull);
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3Xml, LastPageAndEmptyListing) {
  S3ListPage page = parse_list_objects_v2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>");
  EXPECT_TRUE(page.objects.empty());
  EXPECT_FALSE(page.truncated);
  EXPECT_EQ(page.next_continuation_token, "");
}

TEST(S3Xml, NamespacePrefixesCommentsAndCdata) {
  S3ListPage page = parse_list_objects_v2(
      "<s3:ListBucketResult xmlns:s3='x'><!-- a comment --><s3:Contents>"
      "<s3:Key>k<![CDATA[&amp;<raw>]]>&amp;</s3:Key><s3:Size> 7 </s3:Size><Owner/></s3:Contents>"
      "<s3:IsTruncated>false</s3:IsTruncated></s3:ListBucketResult>");
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, "k&amp;<raw>&");
  EXPECT_EQ(page.objects[0].size, 7u);
}

TEST(S3Xml, RejectsMalformedListings) {
  const char* bad[] = {
      "",                                                                        // no root
      "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>",       // unclosed
      "<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>",  // no Size
      "<ListBucketResult><Contents><Key>a</Key><Size>x1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>a&bogus;</Key><Size>1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>a&amp</Key><Size>1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>&#xD800;</Key><Size>1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>",
      "<ListBucketResult><Contents></Key></Contents></ListBucketResult>",            // bad nesting
      "<Error><Code>AccessDenied</Code></Error>",                                    // wrong root
      "<ListBucketResult></ListBucketResult><ListBucketResult></ListBucketResult>",  // two roots
  };
  for (const char* xml : bad) EXPECT_THROW(parse_list_objects_v2(xml), Error) << xml;
}

TEST(S3Xml, ErrorBodies) {
  S3ErrorBody e = parse_s3_error(
      "<?xml version=\"1.0\"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>"
      "<Key>a&amp;b</Key><RequestId>1</RequestId></Error>");
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The specified key does not exist.");
  S3ErrorBody none = parse_s3_error("<html><body>Bad gateway</body></html>");
  EXPECT_EQ(none.code, "");
  S3ErrorBody empty = parse_s3_error("");
  EXPECT_EQ(empty.code, "");
  S3ErrorBody broken = parse_s3_error("<Error><Code>SlowDown</Code><Message>cut sh");
  EXPECT_EQ(broken.code, "SlowDown");  // what was readable is kept
}

TEST(S3Xml, Unescape) {
  EXPECT_EQ(xml_unescape("a&lt;b&gt;c&amp;d&quot;e&apos;f&#65;&#x42;"), "a<b>c&d\"e'fAB");
  EXPECT_EQ(xml_unescape("plain"), "plain");
  EXPECT_THROW(xml_unescape("&#;"), Error);
  EXPECT_THROW(xml_unescape("&#x110000;"), Error);
  EXPECT_THROW(xml_unescape("&nbsp;"), Error);
}

}  // namespace
}  // namespace trialdb
